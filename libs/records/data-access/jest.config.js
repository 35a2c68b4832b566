module.exports = {
  displayName: 'records-data-access',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
